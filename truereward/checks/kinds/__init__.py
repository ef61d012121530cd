"""Built-in check types, one module each. Every module here is imported the
first time a check type is looked up and registers its type; adding a type is
adding a module."""
