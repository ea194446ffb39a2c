"""The argument parser every command of the pack uses (``python <pack> bench | schedule-preview | hf-energy``).

It lives at the bottom layer only so that each command, whatever its layer, can import it; it imports no torch.
argparse prints its whole usage block (11-19 lines for these commands) above an error; here a usage error is one
line that names the argument and points to ``--help``, and exits with status 2 as argparse does.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

USAGE_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line: ``<prog>: error: <message> (see --help)``."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see --help)\n")
