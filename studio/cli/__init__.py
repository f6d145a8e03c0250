"""The `studio` command: one thin module per subcommand, imported only when that subcommand runs."""
