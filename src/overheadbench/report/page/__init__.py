"""The page's room: one self-contained HTML file of a run and its history (``document``), its forest plots,
trend charts and flame graphs drawn as inline SVG, its style and its script."""
