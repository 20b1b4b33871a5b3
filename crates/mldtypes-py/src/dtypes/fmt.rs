//! Text of scalars as ml_dtypes 0.6.0 prints them: the value as `float32`
//! in C's `%g` style with 6 significant digits (`0.100098`, `1e+06`,
//! `3.00407e-05`), NaN without a sign, and `(re+imj)` for complex values.

/// `%g` with 6 significant digits (C++ `std::ostream << float`).
pub(crate) fn g6(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const P: i32 = 6;
    let sci = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..P).contains(&exp) {
        let mant = trim_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let fixed = format!("{:.*}", (P - 1 - exp) as usize, x);
        trim_zeros(&fixed).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A real value as ml_dtypes prints it (NaN's sign dropped).
pub(crate) fn real(x: f32) -> String {
    g6(if x.is_nan() { x.abs() } else { x } as f64)
}

/// A complex value as ml_dtypes prints it: `3j`, `(1+2j)`, `(-0-1.5j)`.
pub(crate) fn complex(re: f32, im: f32) -> String {
    let mut s = String::new();
    let print_real = re != 0.0 || re.is_sign_negative();
    if print_real {
        s.push('(');
        s.push_str(&real(re));
        if !im.is_sign_negative() || im.is_nan() {
            s.push('+');
        }
    }
    s.push_str(&real(im));
    s.push('j');
    if print_real {
        s.push(')');
    }
    s
}
