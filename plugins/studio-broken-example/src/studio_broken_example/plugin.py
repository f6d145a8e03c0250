"""The broken plugin's code: importing it fails, as a plugin does when its SDK is missing."""

raise ImportError("studio-broken-example: libexample_npu.so: cannot open shared object file")
