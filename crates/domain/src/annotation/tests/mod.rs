//! Tests of the annotation module, one file per submodule.

mod assign;
mod fever;
mod form;
mod protocol;
mod queue;
mod undo;
mod vocab;
