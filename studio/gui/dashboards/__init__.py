"""Pieces of the Dashboards page (studio.gui.pages.dashboards_page): the plot grid and the load runs / replay."""
