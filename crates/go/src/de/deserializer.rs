//! The serde [`Deserializer`](de::Deserializer) of one value, read through all its
//! decodings (see [`Occ`](super::Occ)) with Go's rules for each Rust type: nulls leave what
//! was there, numbers must fit the integer type, go-yaml's plain scalars are typed by their
//! target.

use super::{DeError, Flavor, NodeDe, Unused};
use crate::tree::Value;
use crate::yaml::is_null;
use crate::yaml::resolve::{Resolved, resolve, resolve_bool};
use serde::de::{self, IntoDeserializer, Visitor};

impl NodeDe<'_, '_, '_> {
    /// The integer the decodings leave (`None`: only nulls).
    fn integer<T: TryFrom<i128>>(&self, want: &str) -> Result<Option<T>, DeError> {
        self.refused()?;
        let mut out = None;
        for o in self.occs() {
            let wide: Option<i128> = match &o.node.value {
                Value::Null => continue,
                Value::Number(n) => n.parse::<i128>().ok(),
                Value::Plain(t) => match resolve(t) {
                    Resolved::Null => continue,
                    Resolved::Int(i) => Some(i),
                    Resolved::Float(f) => go_int_of_float(f),
                    _ => None,
                },
                _ => None,
            };
            match wide.and_then(|v| T::try_from(v).ok()) {
                Some(v) => out = Some(v),
                None => self.fail(o, want)?,
            }
        }
        Ok(out)
    }
}

/// go-yaml puts a float into an integer field as Go converts one: truncated toward zero,
/// and, out of range, the x86 "integer indefinite" (MinInt64). It refuses only NaN and what
/// is above MaxInt64 as a float (2^63 itself passes its test).
fn go_int_of_float(f: f64) -> Option<i128> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || f > TWO_63 {
        None
    } else if (-TWO_63..TWO_63).contains(&f) {
        Some(f.trunc() as i128)
    } else {
        Some(i128::from(i64::MIN))
    }
}

macro_rules! ints {
    ($($method:ident $t:ty => $visit:ident $name:literal),*) => {
        $(fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
            let n: $t = self.integer($name)?.unwrap_or_default();
            v.$visit(n).map_err(|e| self.locate(e))
        })*
    };
}

impl<'de> de::Deserializer<'de> for NodeDe<'_, '_, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let r = match &self.node.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Number(n) => {
                if let Ok(i) = n.parse::<i64>() {
                    v.visit_i64(i)
                } else if let Ok(u) = n.parse::<u64>() {
                    v.visit_u64(u)
                } else {
                    v.visit_f64(n.parse::<f64>().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => v.visit_str(s),
            Value::Plain(t) => match resolve(t) {
                Resolved::Null => v.visit_unit(),
                Resolved::Bool(b) => v.visit_bool(b),
                Resolved::Int(i) => match i64::try_from(i) {
                    Ok(i) => v.visit_i64(i),
                    Err(_) => v.visit_u64(i as u64),
                },
                Resolved::Float(f) => v.visit_f64(f),
                Resolved::Str => v.visit_str(t),
            },
            Value::Array(_) => return self.deserialize_seq(v),
            Value::Object(_) => return self.deserialize_map(v),
        };
        r.map_err(|e| self.locate(e))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut b = false;
        for o in self.occs() {
            match &o.node.value {
                Value::Bool(x) => b = *x,
                _ if is_null(o.node) => {}
                Value::Plain(t) => match resolve_bool(t) {
                    Some(x) => b = x,
                    None => self.fail(o, "bool")?,
                },
                Value::String(t) if self.st.flavor == Flavor::Yaml => {
                    match crate::yaml::resolve::yaml_1_1_bool(t) {
                        Some(x) => b = x,
                        None => self.fail(o, "bool")?,
                    }
                }
                _ => self.fail(o, "bool")?,
            }
        }
        v.visit_bool(b).map_err(|e| self.locate(e))
    }

    ints!(
        deserialize_i8 i8 => visit_i8 "int8",
        deserialize_i16 i16 => visit_i16 "int16",
        deserialize_i32 i32 => visit_i32 "int32",
        deserialize_i64 i64 => visit_i64 "int",
        deserialize_u8 u8 => visit_u8 "uint8",
        deserialize_u16 u16 => visit_u16 "uint16",
        deserialize_u32 u32 => visit_u32 "uint32",
        deserialize_u64 u64 => visit_u64 "uint64"
    );

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(v)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut f = 0.0;
        for o in self.occs() {
            match &o.node.value {
                Value::Number(n) => match n.parse::<f64>() {
                    Ok(x) => f = x,
                    Err(_) => self.fail(o, "float64")?,
                },
                _ if is_null(o.node) => {}
                Value::Plain(t) => match resolve(t) {
                    Resolved::Int(i) => f = i as f64,
                    Resolved::Float(x) => f = x,
                    _ => self.fail(o, "float64")?,
                },
                _ => self.fail(o, "float64")?,
            }
        }
        v.visit_f64(f).map_err(|e| self.locate(e))
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        let mut s = "";
        for o in self.occs() {
            match &o.node.value {
                Value::String(x) => s = x,
                _ if is_null(o.node) => {}
                Value::Plain(t) => s = t,
                _ => self.fail(o, "string")?,
            }
        }
        v.visit_str(s).map_err(|e| self.locate(e))
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.refused()?;
        if is_null(self.node) {
            return v.visit_none();
        }
        // A null sets a pointer to nil: what came before it is gone.
        let mut me = self;
        if let Some(i) = me.prior.iter().rposition(|o| is_null(o.node)) {
            me.prior.drain(..=i);
        }
        v.visit_some(me)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.sequence(v)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.object(None, v)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.object(Some((name, fields)), v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        self.refused()?;
        match &self.node.value {
            Value::String(s) | Value::Plain(s) => v
                .visit_enum(s.as_str().into_deserializer())
                .map_err(|e: DeError| self.locate(e)),
            _ => Err(self.type_error("string")),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        // Only reached for keys the model has no field for.
        if let Some(offset) = self.key_offset
            && self.report
        {
            self.st.unused.borrow_mut().push(Unused {
                path: self.path.to_json_path(),
                offset,
            });
        }
        v.visit_unit()
    }
}
