"""The sandbox's reset of JAX's options (sandbox._make_jax_reset) between the cells and the
checks: an option the notebook changed is set back and named in a note to the student; ps5's
own setup cell, which sets ``jax_default_device`` to ``jax.devices("cpu")[0]`` where the grader
asks for "cpu", changes nothing and earns no note (every ps5 student used to get one)."""

from __future__ import annotations

import jax
import pytest

from autograder.student import sandbox


@pytest.fixture
def restored():
    saved = {name: jax.config._value_holders[name].value
             for name in ("jax_default_device", "jax_enable_x64")}
    yield
    for name, value in saved.items():
        jax.config.update(name, value)


def test_the_first_device_of_the_platform_the_grader_names_is_no_change(restored):
    reset = sandbox._make_jax_reset({"jax_default_device": "cpu", "jax_enable_x64": True})
    jax.config.update("jax_default_device", "cpu")
    jax.config.update("jax_enable_x64", True)
    assert reset() == []
    jax.config.update("jax_default_device", jax.devices("cpu")[0])  # ps5's setup cell
    assert reset() == []


def test_a_changed_option_is_set_back_and_named(restored):
    reset = sandbox._make_jax_reset({"jax_default_device": "cpu", "jax_enable_x64": True})
    jax.config.update("jax_default_device", "cpu")
    jax.config.update("jax_enable_x64", False)
    assert reset() == ["jax_enable_x64"]
    assert jax.config._value_holders["jax_enable_x64"].value is True
    assert reset() == []
