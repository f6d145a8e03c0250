"""Widgets of the inspector page: findings table model, node/statistics panels, fixes, the Netron tab."""
