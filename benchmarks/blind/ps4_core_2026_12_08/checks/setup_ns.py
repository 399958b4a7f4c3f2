import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcourse.autodidax.core import (
    ShapedArray, add, bind, broadcast, broadcast_p, cos, mul, neg, reduce_sum, sin,
)
from jaxcourse.core.jaxprs import (
    Jaxpr, JaxprEqn, Lit, Var, eval_jaxpr, make_jaxpr, typecheck_jaxpr,
)
from jaxcourse.core.transpose import UndefinedPrimal, grad, is_undefined, transpose_rules
