"""ps4_core: broadcast transpose rule, dead-code elimination, constant folding (Part IV)."""
