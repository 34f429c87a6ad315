import { testPathProperty } from '../helpers/prototype-paths.ts';

/** `make test-stress` runs the same property 2 000 times (test/stress/prototype-paths.test.ts). */
testPathProperty(60);
