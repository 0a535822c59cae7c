"""llmsizer: LLM-serving requirements in, a defensible GPU sizing proposal out."""

__version__ = "0.1.0"
__all__ = ["__version__"]
