// The module is its header; this file gives SwiftPM a source to build.
