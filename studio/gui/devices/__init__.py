"""Pieces of the Devices page (studio.gui.pages.devices_page): server polling, the server view, the
test-inference form, and why a device is down."""
