//! Renders a pairing code as a PNG data URL (8 px modules, 4-module quiet zone).
use base64::Engine;
use qrcode::{Color, QrCode};

const SCALE: usize = 8;
const QUIET: usize = 4;

pub fn png_data_url(code: &str) -> Result<String, String> {
    let qr = QrCode::new(code.as_bytes()).map_err(|e| e.to_string())?;
    let modules = qr.width();
    let colors = qr.to_colors();
    let side = (modules + 2 * QUIET) * SCALE;
    let mut pixels = vec![255u8; side * side];
    for (i, color) in colors.iter().enumerate() {
        if *color != Color::Dark {
            continue;
        }
        let (mx, my) = (i % modules + QUIET, i / modules + QUIET);
        for y in my * SCALE..(my + 1) * SCALE {
            pixels[y * side + mx * SCALE..y * side + (mx + 1) * SCALE].fill(0);
        }
    }
    let mut out = Vec::new();
    {
        let side = u32::try_from(side).map_err(|e| e.to_string())?;
        let mut encoder = png::Encoder::new(&mut out, side, side);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| e.to_string())?;
    }
    Ok(format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(out)
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_a_png_data_url() {
        let url = super::png_data_url("2@abc,def").unwrap();
        assert!(url.starts_with("data:image/png;base64,iVBOR"));
    }
}
