//! The token vectors, read from a safetensors file.

/// The one 2-D tensor of a safetensors file, as f32, with its shape.
pub(super) fn read_table(bytes: &[u8]) -> Result<(Vec<f32>, usize, usize), String> {
    use safetensors::{Dtype, SafeTensors};
    let file =
        SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file: {e}"))?;
    let names = file.names();
    let name = match names.as_slice() {
        [one] => one.to_string(),
        _ => {
            return Err(format!(
                "want exactly one tensor (the token vectors), found {}",
                names.len()
            ))
        }
    };
    let tensor = file.tensor(&name).map_err(|e| e.to_string())?;
    let [vocab, dim] = tensor.shape() else {
        return Err(format!(
            "tensor `{name}` has shape {:?}; want vocabulary x dimensions",
            tensor.shape()
        ));
    };
    let (vocab, dim) = (*vocab, *dim);
    if vocab == 0 || dim == 0 {
        return Err(format!("tensor `{name}` is empty"));
    }
    let data = tensor.data();
    let table: Vec<f32> = match tensor.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => {
            return Err(format!(
                "tensor `{name}` holds {other:?}; want f32, f16 or bf16"
            ))
        }
    };
    if table.len() != vocab * dim {
        return Err(format!(
            "tensor `{name}` holds {} values, not {vocab} x {dim}",
            table.len()
        ));
    }
    if table.iter().any(|v| !v.is_finite()) {
        return Err(format!("tensor `{name}` holds values that are not finite"));
    }
    Ok((table, vocab, dim))
}

/// A safetensors file holding one tensor `t` (tests).
#[cfg(test)]
pub(crate) fn tensor_file(dtype: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let header = format!(
        r#"{{"t":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}
