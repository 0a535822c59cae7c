"""``python -m llmsizer.cli``: the command line, as the ``llmsizer`` script runs it."""

from . import main

if __name__ == "__main__":
    main()
