import { expect } from 'chai'
import { HttpError } from '../../../core/errors.ts'

/** The HttpError a promise rejects with; fails the test if it resolves or rejects otherwise. */
export async function rejectionOf(promise: Promise<unknown>): Promise<HttpError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(HttpError)
    return error as HttpError
  }
  expect.fail('expected the promise to reject with an HttpError')
}

/** The HttpError a call throws; fails the test if it returns or throws something else. */
export function thrownBy(call: () => unknown): HttpError {
  try {
    call()
  } catch (error) {
    expect(error).to.be.instanceOf(HttpError)
    return error as HttpError
  }
  expect.fail('expected the call to throw an HttpError')
}
