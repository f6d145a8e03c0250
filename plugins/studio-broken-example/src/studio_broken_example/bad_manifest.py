"""A manifest module that cannot even be imported, as when a plugin's dependency is missing."""

raise ImportError("studio-broken-example: the vendor SDK 'libexample_npu' is not installed")
