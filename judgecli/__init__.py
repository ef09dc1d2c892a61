"""judge: grade LLM outputs with LLM judges."""

__version__ = "0.1.0"
