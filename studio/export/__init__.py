"""studio.export"""

from studio.export.torchvision_compat import install as _install_torchvision_hook

# torchvision whose native library does not load (a CUDA build beside a CPU torch) still gives transformers its
# image transforms: a hook that acts only on `import torchvision`, reported by every export that used it
_install_torchvision_hook()
