package org.apache.spark.sql.execution;

import org.apache.spark.sql.catalyst.expressions.codegen.CodeAndComment;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import scala.Tuple2;

/**
 * Compile-time stand-in for Spark's {@code WholeStageCodegenExec}: the members streamdq's classes
 * use, with Spark's own descriptors. It is never packaged: at run time the JVM links against
 * Spark's class.
 *
 * <p>Why: javac refuses any Java subclass of Spark's class, because its Scala-compiled final
 * {@code withNewChildrenInternal} returns the erased {@code TreeNode} where the generic
 * {@code TreeNode<SparkPlan>} it implements promises a {@code SparkPlan}; the JVM, which resolves
 * overrides by name and descriptor, has no such rule. {@code io.streamdq.ReusedPlan.KeptCodegen}
 * overrides {@code doCodeGen} only.
 */
public abstract class WholeStageCodegenExec extends SparkPlan {
  public WholeStageCodegenExec(SparkPlan child, int codegenStageId) {}

  public SparkPlan child() {
    throw new UnsupportedOperationException("stub");
  }

  public int codegenStageId() {
    throw new UnsupportedOperationException("stub");
  }

  public Tuple2<CodegenContext, CodeAndComment> doCodeGen() {
    throw new UnsupportedOperationException("stub");
  }

  // Spark's class implements the rest; concrete here so that javac accepts a concrete subclass

  public org.apache.spark.rdd.RDD<org.apache.spark.sql.catalyst.InternalRow> doExecute() {
    throw new UnsupportedOperationException("stub");
  }

  public scala.collection.immutable.Seq<org.apache.spark.sql.catalyst.expressions.Attribute> output() {
    throw new UnsupportedOperationException("stub");
  }

  public scala.collection.immutable.Seq<SparkPlan> children() {
    throw new UnsupportedOperationException("stub");
  }

  public SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> children) {
    throw new UnsupportedOperationException("stub");
  }

  public int productArity() {
    throw new UnsupportedOperationException("stub");
  }

  public Object productElement(int n) {
    throw new UnsupportedOperationException("stub");
  }

  public boolean canEqual(Object that) {
    throw new UnsupportedOperationException("stub");
  }
}
