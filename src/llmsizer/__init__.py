"""llmsizer: LLM-serving requirements in, a defensible GPU sizing proposal out.

The sub-packages are layers in the order data flows; each imports only those before it
(docs/architecture.md, tested by tests/test_architecture.py):

base → model → inputs → sizing → documents → runs → cli
"""

from .base.version import __version__

__all__ = ["__version__"]
