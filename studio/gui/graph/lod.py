"""Zoom thresholds (levels of detail) shared by the scene's items, derived from the text sizes they draw.

Text in the scene scales with the zoom; below the zoom at which a font would be drawn smaller than
LEGIBLE_PX device pixels it is not drawn there at all: the label layer (studio.gui.graph.labels) writes the
names at a fixed, legible size instead, as many as fit without overlapping (semantic zoom, never shrunk text).
"""

LEGIBLE_PX = 10.0  # the smallest text, in device pixels (font pixel size), the graph ever draws
OP_PX = 13  # op type, group and I/O names, frame titles (scene pixels at zoom 1)
SMALL_PX = 11  # node names, roll-ups, output shapes, stub and edge-count labels
LAYER_PX = 11  # the label layer's names (device pixels, whatever the zoom)
LAYER_GROUP_PX = 12  # the label layer's group and frame titles

LOD_BOXES = 0.38  # below: flat boxes, no antialiasing
LOD_LABEL = LEGIBLE_PX / OP_PX  # op type in its box (0.77); below it the label layer names the boxes
LOD_NAME = LEGIBLE_PX / SMALL_PX  # node name under the op type, roll-ups, stub labels (0.91)
LOD_SHAPES = 1.25  # output shapes next to the edges
LOD_OVERVIEW = 0.06  # below: groups of tiles paint as one item (fewer Python paint calls per frame)
FIT_MAX = 1.6  # Fit never blows a small graph up beyond this
