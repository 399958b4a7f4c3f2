"""Run by IPython when a kernel of the book build starts (book_site sets PYTHONSTARTUP to it).

Every chapter then shows its exceptions the same way (see :mod:`jaxcourse.error_display`),
without a setup cell of its own. It runs in the notebook's namespace, so it leaves no name there.
"""

import jaxcourse.error_display as _error_display

_error_display.install()
del _error_display
