package io.streamdq;

import java.util.Collections;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.QueryPlanningTracker;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeAndComment;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import scala.Tuple2;

/**
 * The small-batch path's projection put over a new microbatch's plan, without Spark analysing
 * or optimising it again (streamdq.engine.arrow_path._select).
 *
 * <p>A streaming query's microbatches are plans over the same attributes; the projection of the
 * first batch was analysed and optimised by Spark, and is kept. For each later batch it is put
 * over the batch's plan and marked analysed. When the batch's plan is a {@code LogicalRDD} (what
 * {@code foreachBatch} hands over: a leaf over the already planned RDD, with nothing left to
 * optimise) and the kept projection is the optimised one, the query's optimised plan IS that plan:
 * the optimiser's rule set (~100 rules, run to a fixed point over ~30 expressions, tens of
 * milliseconds on a loaded machine) is skipped. Any other input is optimised by Spark as usual.
 *
 * <p>Given a {@code code} holder, the generated Java source of the projection's whole-stage
 * codegen stage is kept too. Spark generates it again for every new query (a walk over every
 * expression, ~25 KB of source for the standard suite's ~30 expressions, then a compile-cache
 * lookup: 6-16 ms a batch), although a batch's physical plan is the same projection over the same
 * attributes; only its input RDD is new. A batch whose stage has the kept projection list over the
 * kept input attributes, with the same stage id, runs the kept source ({@link KeptCodegen}); any
 * other plan generates its own, which is then kept; a stage with a subquery (whose result the
 * source holds as a literal) always generates its own. The kept context also holds the first batch's
 * SQL metric objects the source refers to (the scan's output rows): later batches add to those,
 * so Spark's SQL UI shows no row count for their scan node; nothing in streamdq reads it.
 */
public final class ReusedPlan {
  private ReusedPlan() {}

  /**
   * A DataFrame of {@code kept} (an analysed, and optimised when {@code optimized}, projection
   * whose child had {@code child}'s output) over {@code child}.
   */
  public static Dataset<Row> over(
      SparkSession session, LogicalPlan kept, LogicalPlan child, boolean optimized) {
    return over(session, kept, child, optimized, null);
  }

  /**
   * As {@link #over(SparkSession, LogicalPlan, LogicalPlan, boolean)}; with {@code code} (one
   * holder per kept projection, empty at first) the stage's generated source is kept there and
   * reused by later batches.
   */
  public static Dataset<Row> over(
      SparkSession session,
      LogicalPlan kept,
      LogicalPlan child,
      boolean optimized,
      AtomicReference<Object[]> code) {
    LogicalPlan plan =
        kept.withNewChildren(
            scala.jdk.javaapi.CollectionConverters.asScala(Collections.singletonList(child))
                .toSeq());
    plan.setAnalyzed();
    if (!optimized || !(child instanceof LogicalRDD)) {
      return Dataset.ofRows(session, plan);
    }
    final LogicalPlan done = plan;
    QueryExecution qe =
        new QueryExecution(
            session,
            plan,
            new QueryPlanningTracker(QueryPlanningTracker.$lessinit$greater$default$1()),
            QueryExecution.$lessinit$greater$default$4(),
            QueryExecution.$lessinit$greater$default$5(),
            QueryExecution.$lessinit$greater$default$6(),
            QueryExecution.$lessinit$greater$default$7(),
            QueryExecution.$lessinit$greater$default$8()) {
          private SparkPlan executed;

          @Override
          public LogicalPlan optimizedPlan() {
            return done;
          }

          @Override
          public synchronized SparkPlan executedPlan() {
            if (executed == null) {
              executed = code == null ? super.executedPlan() : keptCode(super.executedPlan(), code);
            }
            return executed;
          }
        };
    return new Dataset<Row>(qe, Encoders.row(plan.schema()));
  }

  /**
   * {@code plan} with its top whole-stage codegen stage running the source kept in {@code code}
   * when that source was generated for the same projection over the same input attributes (else
   * generated now and kept); {@code plan} itself when it is not one projection stage.
   */
  static SparkPlan keptCode(SparkPlan plan, AtomicReference<Object[]> code) {
    if (!(plan instanceof WholeStageCodegenExec) || plan instanceof KeptCodegen) {
      return plan;
    }
    WholeStageCodegenExec stage = (WholeStageCodegenExec) plan;
    if (!(stage.child() instanceof ProjectExec)) {
      return plan;
    }
    ProjectExec project = (ProjectExec) stage.child();
    if (!project.subqueriesAll().isEmpty()) {
      // a subquery's result is a literal of the generated source: it must be generated per query
      return plan;
    }
    Object[] shape = {project.projectList(), project.child().output(), stage.codegenStageId()};
    Object[] held = code.get();
    @SuppressWarnings("unchecked")
    Tuple2<CodegenContext, CodeAndComment> generated =
        held != null
                && held[0].equals(shape[0])
                && held[1].equals(shape[1])
                && held[2].equals(shape[2])
            ? (Tuple2<CodegenContext, CodeAndComment>) held[3]
            : null;
    if (generated == null) {
      generated = stage.doCodeGen();
      code.set(new Object[] {shape[0], shape[1], shape[2], generated});
    }
    return new KeptCodegen(project, stage.codegenStageId(), generated);
  }

  /** A whole-stage codegen stage whose source was generated before (for an equal stage). */
  public static final class KeptCodegen extends WholeStageCodegenExec {
    private final transient Tuple2<CodegenContext, CodeAndComment> generated;

    KeptCodegen(SparkPlan child, int codegenStageId, Tuple2<CodegenContext, CodeAndComment> generated) {
      super(child, codegenStageId);
      this.generated = generated;
    }

    /** What Spark's {@code makeCopy} calls (a copy with other children generates its own). */
    public KeptCodegen(SparkPlan child, int codegenStageId) {
      this(child, codegenStageId, null);
    }

    @Override
    public Tuple2<CodegenContext, CodeAndComment> doCodeGen() {
      return generated == null ? super.doCodeGen() : generated;
    }
  }
}
