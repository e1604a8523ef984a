package io.streamdq;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.json.JsonToStructsEvaluator;
import org.apache.spark.sql.catalyst.json.CreateJacksonParser;
import org.apache.spark.sql.catalyst.json.JSONOptions;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.BadRecordException;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Function1;
import scala.Function2;
import scala.Option;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;

/**
 * streamdq's JSON decoder in one Jackson pass per record: a Spark UDF giving, for a JSON payload,
 * the schema's typed values (exactly what {@code from_json} with a corrupt-record column gives:
 * the same Spark JacksonParser, options, time zone and partial results of a bad record), the record's error
 * reason and its drift facts (unknown, missing and type-error field names).
 *
 * <p>The rules are those of streamdq.connectors.sources.decode.decode_json, whose Spark-expression
 * form is the reference: a record is clean when its top-level keys could be read (it is a JSON
 * object without NaN/Infinity tokens, as json_object_keys requires) and no top-level field
 * failed to convert; every other record takes the exact path (a lenient from_json to
 * MAP&lt;STRING,STRING&gt;, through Spark's own evaluator, and per-field reasons). The expression
 * decoder parses a clean record twice (the typed parse and the key scan); this one once.
 *
 * <p>Output struct: the typed fields as {@code _0.._n-1}, then {@code error} STRING (without the
 * UTF-8 reason, which the caller adds), {@code unknown}, {@code missing}, {@code type_errors}
 * ARRAY&lt;STRING&gt;.
 */
public final class JsonDecode implements UDF1<byte[], Row> {
  private static final long serialVersionUID = 1L;
  private static final Pattern BLANK = Pattern.compile("^\\s*$");
  private static final int MAX_QUOTED = 60;

  private final String schemaJson;
  private final String[] required;
  private final String corruptName;
  private final String timeZone;
  private final String mapCorruptName;
  private final boolean allowDuplicateKeys;

  private transient StructType schema;
  private transient String[] names;
  private transient String[] expected;
  private transient boolean[] isRequired;
  private transient Function1<Object, Object>[] toScala;
  private transient DataType[] types;
  private transient JacksonParser typed;
  private transient Function2<JsonFactory, byte[], JsonParser> create;
  private transient Function1<byte[], UTF8String> literal;
  private transient KeyRecordingParser current;
  private transient JsonToStructsEvaluator mapEval;

  public JsonDecode(
      String schemaJson,
      String[] required,
      String corruptName,
      String timeZone,
      String mapCorruptName,
      boolean allowDuplicateKeys) {
    this.schemaJson = schemaJson;
    this.required = required;
    this.corruptName = corruptName;
    this.timeZone = timeZone;
    this.mapCorruptName = mapCorruptName;
    this.allowDuplicateKeys = allowDuplicateKeys;
  }

  /** The UDF's return type for a schema (JSON form of a StructType). */
  public static StructType outputType(String schemaJson) {
    StructType s = (StructType) DataType.fromJson(schemaJson);
    List<StructField> out = new ArrayList<>();
    StructField[] fs = s.fields();
    for (int i = 0; i < fs.length; i++) {
      out.add(DataTypes.createStructField("_" + i, fs[i].dataType(), true));
    }
    ArrayType strings = DataTypes.createArrayType(DataTypes.StringType, true);
    out.add(DataTypes.createStructField("error", DataTypes.StringType, true));
    out.add(DataTypes.createStructField("unknown", strings, true));
    out.add(DataTypes.createStructField("missing", strings, true));
    out.add(DataTypes.createStructField("type_errors", strings, true));
    return DataTypes.createStructType(out);
  }

  /**
   * Registers the decoder for one schema as the session function {@code name}; the time zone,
   * the corrupt-record column name and the duplicate-key setting are the session's now.
   */
  public static void register(
      SparkSession spark,
      String name,
      String schemaJson,
      java.util.List<String> required,
      String corruptName) {
    String tz = spark.conf().get("spark.sql.session.timeZone");
    String mapCorrupt = spark.conf().get("spark.sql.columnNameOfCorruptRecord");
    boolean dup =
        Boolean.parseBoolean(spark.conf().get("spark.sql.variant.allowDuplicateKeys", "false"));
    JsonDecode udf = new JsonDecode(
            schemaJson, required.toArray(new String[0]), corruptName, tz, mapCorrupt, dup);
    spark.udf().register(name, udf, outputType(schemaJson));
  }

  /**
   * Runs a good, a bad and a blank record through a decoder for {@code schemaJson} on this JVM
   * (no Spark job): a jar compiled against another Spark fails here, at start-up, with a linkage
   * error, instead of in a task. Returns the decoded rows' text.
   */
  public static String selfTest(String schemaJson, String corruptName, String timeZone) {
    JsonDecode d =
        new JsonDecode(schemaJson, new String[0], corruptName, timeZone, "_corrupt_record", false);
    StringBuilder out = new StringBuilder();
    String[] samples = {"{}", "{\"x\": [1, NaN}", " "};
    for (String sample : samples) {
      out.append(d.call(sample.getBytes(java.nio.charset.StandardCharsets.UTF_8))).append('\n');
    }
    return out.toString();
  }

  @SuppressWarnings("unchecked")
  private void init() {
    schema = (StructType) DataType.fromJson(schemaJson);
    StructField[] fs = schema.fields();
    int n = fs.length;
    names = new String[n];
    expected = new String[n];
    isRequired = new boolean[n];
    types = new DataType[n];
    toScala = new Function1[n];
    HashSet<String> req = new HashSet<>(Arrays.asList(required));
    for (int i = 0; i < n; i++) {
      names[i] = fs[i].name();
      expected[i] = fs[i].dataType().simpleString().toUpperCase(java.util.Locale.ROOT);
      isRequired[i] = req.contains(names[i]);
      types[i] = fs[i].dataType();
      DataType dt = types[i];
      boolean passThrough =
          dt instanceof StringType
              || dt == DataTypes.LongType
              || dt == DataTypes.IntegerType
              || dt == DataTypes.DoubleType
              || dt == DataTypes.FloatType
              || dt == DataTypes.ShortType
              || dt == DataTypes.ByteType
              || dt == DataTypes.BooleanType;
      // TIMESTAMP and DATE leave as Instant / LocalDate, which Spark turns back into the same
      // micros / days exactly (java.sql.Timestamp / Date would take a calendar rebase each way).
      if (dt == DataTypes.TimestampType) {
        toScala[i] = new AbstractFunction1<Object, Object>() {
          @Override
          public Object apply(Object micros) {
            return DateTimeUtils.microsToInstant((Long) micros);
          }
        };
      } else if (dt == DataTypes.DateType) {
        toScala[i] = new AbstractFunction1<Object, Object>() {
          @Override
          public Object apply(Object days) {
            return DateTimeUtils.daysToLocalDate((Integer) days);
          }
        };
      } else {
        toScala[i] = passThrough ? null : CatalystTypeConverters.createToScalaConverter(dt);
      }
    }
    StructType actualSchema = (StructType) schema.asNullable();
    java.util.Map<String, String> jopts = new java.util.HashMap<>();
    jopts.put("mode", "PERMISSIVE");
    jopts.put("columnNameOfCorruptRecord", corruptName);
    scala.collection.immutable.Map<String, String> opts =
        scala.collection.immutable.Map$.MODULE$.from(
            scala.jdk.javaapi.CollectionConverters.asScala(jopts));
    JSONOptions options = new JSONOptions(opts, timeZone, corruptName);
    JacksonParser raw =
        new JacksonParser(actualSchema, options, false, JacksonParser.$lessinit$greater$default$4());
    final JsonDecode self = this;
    create =
        new AbstractFunction2<JsonFactory, byte[], JsonParser>() {
          @Override
          public JsonParser apply(JsonFactory f, byte[] s) {
            // bytes through an InputStream: Jackson's fast UTF-8 parser, while Spark's StringType
            // converter renders a nested value with its generator, as from_json does (a byte[]
            // source would make it copy the raw text instead)
            try {
              KeyRecordingParser p =
                  new KeyRecordingParser(f.createParser(new java.io.ByteArrayInputStream(s)));
              self.current = p;
              return p;
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }
        };
    literal =
        new AbstractFunction1<byte[], UTF8String>() {
          @Override
          public UTF8String apply(byte[] s) {
            return UTF8String.fromBytes(s);
          }
        };
    typed = raw;
    MapType mapType = DataTypes.createMapType(DataTypes.StringType, DataTypes.StringType, true);
    mapEval =
        JsonToStructsEvaluator.apply(
            scala.collection.immutable.Map$.MODULE$.<String, String>empty(),
            mapType,
            mapCorruptName,
            Option.apply(timeZone),
            allowDuplicateKeys);
  }

  @Override
  public Row call(byte[] raw) {
    if (schema == null) {
      init();
    }
    int n = names.length;
    Object[] out = new Object[n + 4];
    if (raw == null) {
      out[n] = "empty payload";
      return RowFactory.create(out);
    }
    current = null;
    // from_json's FailureSafeParser in PERMISSIVE mode, by hand (without its per-row copy into
    // a row with the corrupt-record column): a bad record keeps Spark's partial result, if any.
    InternalRow row;
    boolean corruptNull;
    try {
      Iterator<InternalRow> rows = typed.parse(raw, create, literal).iterator();
      row = rows.hasNext() ? rows.next() : null;
      corruptNull = true;
    } catch (Exception e) {
      if (!(e instanceof BadRecordException)) {
        throw e instanceof RuntimeException ? (RuntimeException) e : new RuntimeException(e);
      }
      InternalRow[] partial = ((BadRecordException) e).partialResults().apply();
      row = partial.length > 0 ? partial[0] : null;
      corruptNull = false;
    }
    KeyRecordingParser rec = current;
    boolean clean =
        row != null
            && corruptNull
            && rec != null
            && rec.rootObject
            && rec.rootClosed
            && !rec.nonFinite;
    for (int i = 0; i < n; i++) {
      Object v = (row == null || row.isNullAt(i)) ? null : row.get(i, types[i]);
      out[i] = (v == null || toScala[i] == null) ? v : toScala[i].apply(v);
    }
    if (clean) {
      List<String> keys = rec.keys;
      StringBuilder err = null;
      for (int i = 0; i < n; i++) {
        if (!isRequired[i]) {
          continue;
        }
        String reason = null;
        if (!keys.contains(names[i])) {
          reason = "missing required field " + names[i];
        } else if (row.isNullAt(i)) {
          reason = "required field " + names[i] + " is null";
        }
        if (reason != null) {
          err = err == null ? new StringBuilder(reason) : err.append("; ").append(reason);
        }
      }
      out[n] = err == null ? null : err.toString();
      String[] none = new String[0];
      if (exactKeys(keys)) {
        out[n + 1] = none;
        out[n + 2] = none;
      } else {
        out[n + 1] = except(keys, Arrays.asList(names));
        out[n + 2] = except(Arrays.asList(names), keys);
      }
      out[n + 3] = none;
      return RowFactory.create(out);
    }
    // The exact path: Spark's lenient map parse, per-field reasons.
    UTF8String text = UTF8String.fromBytes(raw);
    MapData m = (MapData) mapEval.evaluate(text);
    if (BLANK.matcher(text.toString()).find()) {
      out[n] = "empty payload";
    } else if (m == null) {
      out[n] = "undecodable JSON";
    }
    if (m == null) {
      return RowFactory.create(out); // keys, drift arrays: NULL
    }
    ArrayData mk = m.keyArray();
    ArrayData mv = m.valueArray();
    List<String> keys = new ArrayList<>(mk.numElements());
    List<String> values = new ArrayList<>(mk.numElements());
    for (int j = 0; j < mk.numElements(); j++) {
      keys.add(mk.getUTF8String(j).toString());
      values.add(mv.isNullAt(j) ? null : mv.getUTF8String(j).toString());
    }
    StringBuilder err = null;
    List<String> typeErrors = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int at = keys.indexOf(names[i]);
      String v = at < 0 ? null : values.get(at);
      boolean tnull = row == null || row.isNullAt(i);
      boolean mismatch = v != null && tnull;
      String reason = null;
      if (mismatch) {
        typeErrors.add(names[i]);
        reason = "field " + names[i] + ": expected " + expected[i] + " got " + quote(v);
      } else if (isRequired[i] && at < 0) {
        reason = "missing required field " + names[i];
      } else if (isRequired[i] && v == null) {
        reason = "required field " + names[i] + " is null";
      }
      if (reason != null) {
        err = err == null ? new StringBuilder(reason) : err.append("; ").append(reason);
      }
    }
    if (out[n] == null) {
      out[n] = err == null ? null : err.toString();
    }
    out[n + 1] = except(keys, Arrays.asList(names));
    out[n + 2] = except(Arrays.asList(names), keys);
    out[n + 3] = typeErrors.toArray(new String[0]);
    return RowFactory.create(out);
  }

  private boolean exactKeys(List<String> keys) {
    if (keys.size() != names.length) {
      return false;
    }
    for (int i = 0; i < names.length; i++) {
      if (!names[i].equals(keys.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** Spark's array_except: the distinct elements of a not in b, in a's order. */
  private static String[] except(List<String> a, List<String> b) {
    HashSet<String> drop = new HashSet<>(b);
    LinkedHashSet<String> out = new LinkedHashSet<>();
    for (String x : a) {
      if (!drop.contains(x)) {
        out.add(x);
      }
    }
    return out.toArray(new String[0]);
  }

  /** decode.py's _quote: at most 60 characters (code points), then "...", in single quotes. */
  private static String quote(String v) {
    int count = v.codePointCount(0, v.length());
    String shown = v;
    if (count > MAX_QUOTED) {
      shown = v.substring(0, v.offsetByCodePoints(0, MAX_QUOTED)) + "...";
    }
    return "'" + shown + "'";
  }
}
