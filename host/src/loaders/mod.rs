//! Loaders: each turns one kind of source into registered tools. Loaders never call tools.

pub mod components;
