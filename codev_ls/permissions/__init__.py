"""The permission system: modes, rules, shell parsing, settings, decisions."""
