"""The bundled configs for `pmppbench all --config NAME`, installed as package data."""
