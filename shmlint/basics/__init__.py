"""The basics every layer shares: result types, the catalog of sources, sinks and sanitizers,
name resolution on ast, options and configuration. Imports nothing else of shmlint."""
