"""Stand-in vLLM package for pmqa-probe's tests (see ../../README.md)."""

__version__ = "0.0.0+pmqa.standin"
