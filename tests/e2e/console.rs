//! The operator console: its overview routes (public API), and the pages
//! themselves in a real browser.
mod pages;
mod routes;
mod support;
