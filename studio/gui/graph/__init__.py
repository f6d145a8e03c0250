"""Native graph view for ONNX models: layered layout off the GUI thread, level-of-detail painting.

``graph_from_onnx`` (model.py) turns a ModelProto into plain arrays (no Qt), ``compute_layout`` (layout.py)
places it with igraph's Sugiyama layout, and ``GraphView`` (view.py) shows it: verdict colours, dynamic edges,
selection, search and smooth pan/zoom stay fluid on 10,000-node graphs.
"""
