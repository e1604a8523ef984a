package io.streamdq;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import java.io.IOException;
import java.util.ArrayList;

/**
 * A Jackson parser that passes every token through to Spark's JacksonParser unchanged and, on the
 * way, notes what the decoder needs besides the typed values: the record's top-level keys (in
 * order, repeats kept), whether the root is an object read to its end, and whether a non-finite
 * number token (NaN, Infinity) occurred anywhere (Spark's json_object_keys rejects those, so such a
 * record takes the exact path, as in the expression decoder).
 *
 * <p>skipChildren walks the skipped tokens through nextToken so that nothing escapes the notes.
 */
final class KeyRecordingParser extends JsonParserDelegate {
  final ArrayList<String> keys;
  boolean rootObject;
  boolean rootClosed;
  boolean nonFinite;
  private int depth;

  /** {@code width}: the expected number of top-level keys (the list's first capacity). */
  KeyRecordingParser(JsonParser d, int width) {
    super(d);
    keys = new ArrayList<>(width);
  }

  @Override
  public JsonToken nextToken() throws IOException {
    JsonToken t = delegate.nextToken();
    if (t == null) {
      return null;
    }
    switch (t) {
      case START_OBJECT:
        if (depth == 0) {
          rootObject = true;
        }
        depth++;
        break;
      case START_ARRAY:
        depth++;
        break;
      case END_OBJECT:
      case END_ARRAY:
        depth--;
        if (depth == 0 && rootObject) {
          rootClosed = true;
        }
        break;
      case FIELD_NAME:
        if (depth == 1) {
          keys.add(delegate.currentName());
        }
        break;
      case VALUE_NUMBER_FLOAT:
        if (delegate.isNaN()) {
          nonFinite = true;
        }
        break;
      default:
        break;
    }
    return t;
  }

  @Override
  public JsonToken nextValue() throws IOException {
    JsonToken t = nextToken();
    if (t == JsonToken.FIELD_NAME) {
      t = nextToken();
    }
    return t;
  }

  @Override
  public JsonParser skipChildren() throws IOException {
    JsonToken t = delegate.currentToken();
    if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
      int target = depth - 1;
      while (depth > target) {
        if (nextToken() == null) {
          break;
        }
      }
    }
    return this;
  }
}
