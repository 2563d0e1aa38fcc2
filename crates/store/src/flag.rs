//! A yes/no read from the database: SQLite answers a comparison or `EXISTS` with an integer
//! (0 or 1, as it stores flags), PostgreSQL with a boolean. [`Flag`] reads either, and NULL
//! (unknown) as no.

use sqlx::any::{Any, AnyTypeInfo, AnyTypeInfoKind, AnyValueRef};
use sqlx::decode::Decode;
use sqlx::error::BoxDynError;
use sqlx::{TypeInfo as _, ValueRef};

/// A boolean column or expression, whichever way the engine spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(flag: Flag) -> bool {
        flag.0
    }
}

impl sqlx::Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <bool as sqlx::Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        ty.kind() == AnyTypeInfoKind::Bool || ty.kind().is_integer() || ty.is_null()
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        // SQL's unknown (a comparison with NULL) is not a yes, as a WHERE clause reads it.
        if value.is_null() {
            return Ok(Flag(false));
        }
        if value.type_info().kind() == AnyTypeInfoKind::Bool {
            Ok(Flag(<bool as Decode<Any>>::decode(value)?))
        } else {
            Ok(Flag(<i64 as Decode<Any>>::decode(value)? != 0))
        }
    }
}
