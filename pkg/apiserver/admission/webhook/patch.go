package webhook

import jsonpatch "gopkg.in/evanphx/json-patch.v4"

// decodePatch parses an RFC 6902 JSON patch with the library the API
// server's own json-patch requests use (gopkg.in/evanphx/json-patch.v4,
// as upstream's webhook dispatcher).
func decodePatch(data []byte) (jsonpatch.Patch, error) { return jsonpatch.DecodePatch(data) }
