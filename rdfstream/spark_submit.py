"""The rdfstream command line as a script for ``spark-submit`` (which takes a file, not a module)::

    spark-submit --master spark://head:7077 "$(python -c 'import rdfstream.spark_submit as s; print(s.__file__)')" \\
        query busy.rq … --engine spark --master spark://head:7077
"""

import sys

from rdfstream.cli import main

if __name__ == "__main__":
    sys.exit(main())
