"""Widgets and flows of the inspector page: header, target strip, graph toolbar and legend, findings, side tabs
(node details, fixes, profile panel), the Netron tab, and the selection, colour, fix and profile flows."""
