"""Layer 7 — the presales web app (``llmsizer serve``): the account form with live sizing,
the documents to download, edited workbooks back in, the catalog and estimate pages. It calls
the same loader, engine and documents as the CLI (``service``, ``jobs``) and does no sizing
arithmetic of its own. ``app`` builds the application, ``security`` guards every request,
``fields`` holds the form's fields, ``forms`` maps the form to requirements and back
(``percent`` its fractions in percent), ``archetypes`` holds the quick start, ``account``
and ``reference`` the pages (``render`` their templates), ``server`` the bind checks."""

# the layer's modules (tests/test_architecture.py keeps this list whole and sorted)
__all__ = [
    "account",
    "app",
    "archetypes",
    "fields",
    "forms",
    "jobs",
    "percent",
    "reference",
    "render",
    "security",
    "server",
    "service",
]
