"""studio-rknn: Rockchip rknn-toolkit2 as a Deployment Studio plugin (verifier now; compile and runtime later).

Nothing here imports the toolkit: it runs in its own environment (``studio_rknn.env``) behind a JSON worker.
"""

__version__ = "0.1.0"
