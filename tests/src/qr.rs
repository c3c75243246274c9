//! Reads the string encoded in a QR PNG data URL, as a phone's camera would.
use base64::Engine;

pub fn decode_data_url(data_url: &str) -> String {
    try_decode_data_url(data_url).expect("decodable QR")
}

/// [`decode_data_url`], or why the code could not be read (a camera
/// that cannot read one code waits for the next).
pub fn try_decode_data_url(data_url: &str) -> Result<String, String> {
    let b64 = data_url
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64");
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = buf.len() / (w * h).max(1);
    let mut img =
        rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| buf[(y * w + x) * channels]);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    grids[0]
        .decode()
        .map(|(_, text)| text)
        .map_err(|e| format!("{e:?}"))
}
