"""CLI sub-commands, one module each (see ``streamdq.cli``)."""
