"""Tests of installed wheels: each extra in its own venv, run from outside the checkout."""
