"""The version of this distribution, and the one place it is written down."""

__version__ = "0.5.0"
