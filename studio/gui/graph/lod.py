"""Zoom thresholds (levels of detail) shared by the scene's items."""

LOD_BOXES = 0.38  # below: flat boxes, no text, no antialiasing
LOD_LABEL = 0.38  # op type
LOD_NAME = 0.85  # node name under the op type
LOD_SHAPES = 1.25  # output shapes next to the edges
LOD_OVERVIEW = 0.06  # below: groups of tiles paint as one item (fewer Python paint calls per frame)
