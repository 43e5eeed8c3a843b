//! This module implements the `ArrayIterator` object.
//!
//! More information:
//!  - [ECMAScript reference][spec]
//!
//! [spec]: https://tc39.es/ecma262/#sec-array-iterator-objects

use crate::{
    Context, JsData, JsResult,
    builtins::{
        Array, BuiltInBuilder, IntrinsicObject, JsValue, iterable::create_iter_result_object,
        typed_array::TypedArray,
    },
    context::intrinsics::Intrinsics,
    error::JsNativeError,
    js_string,
    object::JsObject,
    property::{Attribute, PropertyNameKind},
    realm::Realm,
    symbol::JsSymbol,
};
use boa_gc::{Finalize, Trace};

/// The Array Iterator object represents an iteration over an array. It implements the iterator protocol.
///
/// More information:
///  - [ECMAScript reference][spec]
///
/// [spec]: https://tc39.es/ecma262/#sec-array-iterator-objects
#[derive(Debug, Clone, Finalize, Trace, JsData)]
pub(crate) struct ArrayIterator {
    array: JsObject,
    next_index: u64,
    #[unsafe_ignore_trace]
    kind: PropertyNameKind,
    done: bool,
}

impl IntrinsicObject for ArrayIterator {
    fn init(realm: &Realm) {
        BuiltInBuilder::with_intrinsic::<Self>(realm)
            .prototype(realm.intrinsics().constructors().iterator().prototype())
            .static_method(Self::next, js_string!("next"), 0)
            .static_property(
                JsSymbol::to_string_tag(),
                js_string!("Array Iterator"),
                Attribute::CONFIGURABLE,
            )
            .build();
    }

    fn get(intrinsics: &Intrinsics) -> JsObject {
        intrinsics.objects().iterator_prototypes().array()
    }
}

impl ArrayIterator {
    fn new(array: JsObject, kind: PropertyNameKind) -> Self {
        Self {
            array,
            kind,
            next_index: 0,
            done: false,
        }
    }

    /// `CreateArrayIterator( array, kind )`
    ///
    /// Creates a new iterator over the given array.
    ///
    /// More information:
    ///  - [ECMA reference][spec]
    ///
    /// [spec]: https://tc39.es/ecma262/#sec-createarrayiterator
    pub(crate) fn create_array_iterator(
        array: JsObject,
        kind: PropertyNameKind,
        context: &Context,
    ) -> JsValue {
        let array_iterator = JsObject::from_proto_and_data_with_shared_shape(
            context.root_shape(),
            context.intrinsics().objects().iterator_prototypes().array(),
            Self::new(array, kind),
        );
        array_iterator.into()
    }

    /// %ArrayIteratorPrototype%.next( )
    ///
    /// Gets the next result in the array.
    ///
    /// More information:
    ///  - [ECMA reference][spec]
    ///
    /// [spec]: https://tc39.es/ecma262/#sec-%arrayiteratorprototype%.next
    pub(crate) fn next(this: &JsValue, _: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
        // earshot patch: the steps live in `step`, which `IteratorRecord::step` also calls
        // directly (no result object for a `for…of` over an array).
        let (value, done) = Self::step(this, context)?;
        Ok(create_iter_result_object(value, done, context))
    }

    /// The steps of `%ArrayIteratorPrototype%.next` up to `CreateIteratorResultObject`: the
    /// value and the `done` flag the result object would hold (earshot patch).
    pub(crate) fn step(this: &JsValue, context: &mut Context) -> JsResult<(JsValue, bool)> {
        let object = this.as_object();
        fn iterator(
            object: &Option<JsObject>,
        ) -> Result<boa_gc::GcRefMut<'_, ArrayIterator>, JsNativeError> {
            object
                .as_ref()
                .and_then(JsObject::downcast_mut::<ArrayIterator>)
                .ok_or_else(|| JsNativeError::typ().with_message("`this` is not an ArrayIterator"))
        }
        // The iterator is not held borrowed while script may run (a proxy's `length` trap or an
        // element's getter may call this iterator's `next` again: that panicked on a second
        // borrow before).
        let (array, index, kind) = {
            let array_iterator = iterator(&object)?;
            if array_iterator.done {
                return Ok((JsValue::undefined(), true));
            }
            (
                array_iterator.array.clone(),
                array_iterator.next_index,
                array_iterator.kind,
            )
        };

        // earshot patch: an Array's `length` is its first storage slot, read in place as
        // `GetPropertyByName` reads it (no descriptor, no `ToLength` of a non-number).
        let is_array = array.is_array();
        let array_length = is_array
            .then(|| array.borrow().properties().storage[0].as_number())
            .flatten();
        let len = if let Some(length) = array_length {
            length as u64
        } else if let Some(f) = array.downcast_ref::<TypedArray>() {
            let buf = f.viewed_array_buffer().as_buffer();
            let Some(buf) = buf
                .bytes(std::sync::atomic::Ordering::SeqCst)
                .filter(|buf| !f.is_out_of_bounds(buf.len()))
            else {
                return Err(JsNativeError::typ()
                    .with_message("Cannot get value from out of bounds typed array")
                    .into());
            };

            f.array_length(buf.len())
        } else {
            array.length_of_array_like(context)?
        };

        {
            let mut array_iterator = iterator(&object)?;
            if index >= len {
                array_iterator.done = true;
                return Ok((JsValue::undefined(), true));
            }
            array_iterator.next_index = index + 1;
        }
        match kind {
            PropertyNameKind::Key => Ok((index.into(), false)),
            PropertyNameKind::Value => {
                // earshot patch: a dense element of an Array is read in place, as
                // `GetPropertyByValue` reads it; a hole, a sparse array or any other object
                // takes `[[Get]]`.
                let dense = if is_array {
                    u32::try_from(index)
                        .ok()
                        .and_then(|index| array.borrow().properties().get_dense_property(index))
                } else {
                    None
                };
                let element_value = match dense {
                    Some(value) => value,
                    None => array.get(index, context)?,
                };
                Ok((element_value, false))
            }
            PropertyNameKind::KeyAndValue => {
                let element_value = array.get(index, context)?;
                let result = Array::create_array_from_list([index.into(), element_value], context);
                Ok((result.into(), false))
            }
        }
    }
}
