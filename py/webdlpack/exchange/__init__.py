"""Floor 2, exchange: DLPack managed structs and capsules at the view level (export, adopt, capsules, owners)."""
