"""The command line: words -> a plan of steps (planning, config), and the commands (app, tools).

Nothing here touches a GPU: `pmppbench --help` and a mistake on the command line answer without
loading the engine or CuPy.
"""
