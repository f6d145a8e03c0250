"""A deliberately broken Deployment Studio plugin (the package itself imports fine)."""
