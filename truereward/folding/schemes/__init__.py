"""Built-in reward schemes, one module each. Every module here is imported
the first time a scheme is looked up and registers its scheme; adding a
scheme is adding a module."""
