"""How a variant is measured: the timing protocol, clocks, noise and ceilings, the checks."""
