# Installed by `make setup` as $(VENV)/etc/ipython/ipython_kernel_config.py, which every IPython
# kernel of the course's environment reads (JupyterLab's, `nbgrader validate`'s, the book
# build's). It loads autograder.notebook_check: in an assignment's notebook, a cell the grader's
# cell policy would refuse is not run there either, and says why; in any other notebook it does
# nothing. The grader's own sandbox reads no configuration file.
c = get_config()  # noqa: F821 (IPython defines it while it reads this file)
c.InteractiveShellApp.extensions.append("autograder.notebook_check")
